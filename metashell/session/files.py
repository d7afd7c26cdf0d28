"""Opening a source: plan the files, read them, replay them, build the tree.

This is the one place that wires the layers together for the shell and the
CLI: ``loader.inputs`` decides what to read, ``loader.reader`` reads it,
``replay.engine`` applies it, ``fs.tree`` shows it. Damaged batches are
skipped with a warning so that one bad byte does not hide a whole cluster;
a file with nothing readable at all is an error.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Callable

from ..buildinfo import local_entries
from ..errors import CorruptDataError, InputError, MetashellError
from ..fs import paths
from ..fs.entities import entity_records
from ..fs.root import build_root
from ..gcpause import no_cyclic_gc
from ..loader import inputs, side_files
from ..loader.append_times import SegmentAppendTimes
from ..loader.reader import FileReader, snapshot_timestamp
from ..queries.describe import describe
from ..queries.summary import summarize
from ..replay.engine import ReplayEngine
from ..timefmt import iso_time
from .baseline import open_baseline
from .findings import Findings
from .loading import Loader
from .prehistory import OlderLog, honest_history
from .travel import Limit, Point, check_not_before, past_end

class ImageSession:
    """What the commands use of a session: the engine, its image and tree,
    the counts and the ``summary``/``changes`` answers. Shared by the file
    :class:`Session` and the live one (``metashell.session.live``)."""

    #: batch append times by offset (brokers' start times); None: no log to ask
    times = None

    def __init__(self, source: str, engine: ReplayEngine, warnings: list[str],
                 show_secrets: bool, problems: "list[str] | None" = None):
        self.source = source
        self.engine = engine
        self.warnings = warnings        # the load's remarks, printed once (metashell.session.findings)
        self.show_secrets = show_secrets
        # the load's problems (those of the warnings that are), and how many of the
        # engine's problems had been found then: those found later are new_problems
        self.load_problems = [] if problems is None else problems
        self.loaded_engine_problems = len(engine.problems)

    @property
    def image(self):
        return self.engine.image

    def counts(self) -> dict:
        return settled_counts(self.engine)

    def new_problems(self, since: int) -> list[str]:
        """Problems found after ``since`` (lazy partitions are decoded on demand)."""
        return [str(p) for p in self.engine.problems[since:]]

    def problems(self) -> list[str]:
        """Every problem so far, one line each: the load's, then those found
        since (partitions decoded when first looked at). ``--strict`` fails
        on any; ``summary`` lists them."""
        return self.load_problems + self.new_problems(self.loaded_engine_problems)

    def summary(self, static_min_isr=None) -> dict:
        """``static_min_isr``: the brokers' static min.insync.replicas
        where the user gave one (see :mod:`metashell.queries.min_isr`)."""
        data = summarize(self.image, self.engine, self.times, static_min_isr)
        data["problems"] = self.problems()   # after summarize, which may decode partitions
        return data

    def baseline(self, **which):
        """The image ``diff`` compares this one with, and the warnings its
        loading gave: see :func:`metashell.session.baseline.open_baseline`."""
        return open_baseline(self, open_session, **which)

    def changes(self, path: str) -> list[dict]:
        """The records that created or changed the entity at ``path``;
        ``fromSnapshot``: a snapshot's stand-in for the records before it."""
        parts = paths.split(path)
        records = entity_records(self.image, parts)
        if records is None:
            raise KeyError(path)
        return [{"offset": r.offset, "time": iso_time(r.timestamp), "type": r.name,
                 "summary": describe(r), "fromSnapshot": marked}
                for r, marked in self._history(records, parts)]

    def _history(self, records: list, parts: list[str]) -> list[tuple]:
        """``(record, from_snapshot)`` of an entity's records (no snapshot
        file to look behind here: a live session's)."""
        return [(r, False) for r in records]

    def last_change(self, parts: list[str], change: tuple) -> tuple:
        """``((offset, time), from_snapshot)`` of the node at ``parts``
        whose tree gives ``change``: the log's own where the snapshot's
        stamp stands in for it and the log before the snapshot holds it."""
        return change, False


class Session(ImageSession):
    """A loaded source: the image, its tree and what loading had to say."""

    def __init__(self, source: str, plan, engine: ReplayEngine, findings: Findings,
                 show_secrets: bool, times=None):
        super().__init__(source, engine, findings.lines + [str(p) for p in engine.problems],
                         show_secrets, problems=findings.problems)
        self.plan = plan
        self._older: OlderLog | None = None   # the log before the snapshot, for changes
        # batch append times by offset (brokers' start times): the plan's segments,
        # those before the snapshot included, unless the caller has its own source
        self.times = times if times is not None else SegmentAppendTimes(plan.all_segments)
        self.root = build_root(self.image, show_secrets=show_secrets, local=self._local(),
                               times=self.times)

    def problems(self) -> list[str]:
        """The load's problems, then the replay's in offset order, whenever
        they were found (a partition decoded at load or on first look):
        the same list whatever was looked at first."""
        replayed = sorted(self.engine.problems, key=lambda p: (p.offset, str(p)))
        return self.load_problems + [str(p) for p in replayed]

    def _history(self, records: list, parts: list[str]) -> list[tuple]:
        """The snapshot's stand-ins replaced by, or marked beside, the
        records of the log before it (:mod:`metashell.session.prehistory`, read on
        the first question)."""
        return honest_history(records, self._older_log(), parts)

    def last_change(self, parts: list[str], change: tuple) -> tuple:
        older = self._older_log()
        if not older.covers(change[0]):
            return change, False
        return older.last_change(parts) or (change, True)

    def _older_log(self) -> OlderLog:
        if self._older is None:
            self._older = OlderLog(self.plan, Loader(0, None).apply_snapshot)
        return self._older

    def close(self) -> None:
        """Let go of the loaded cluster now (see :meth:`ReplayEngine.close`):
        for a program that loads many, such as a Spark worker. The session
        is not used again."""
        self.root = None
        self.engine.close()
        if self._older is not None:
            self._older.close()

    def _local(self) -> dict:
        plan = self.plan
        meta = plan.meta_properties or {}
        local = {
            **local_entries(),
            "source": self.source,
            "loaded": {
                "snapshot": plan.snapshot.path.name if plan.snapshot else None,
                "segments": [s.path.name for s in plan.segments],
            },
            # the engine's, not the session's: the tree would hold the session that
            # holds it, a cycle keeping the files open after close until a full collection
            "counts": partial(settled_counts, self.engine),
        }
        if plan.kind in ("logdir", "partition-dir"):
            local["clusterId"] = meta.get("cluster.id")
            node = meta.get("node.id", meta.get("broker.id"))
            local["nodeId"] = int(node) if node is not None and str(node).lstrip("-").isdigit() else node
            if meta.get("directory.id"):
                local["directoryId"] = meta["directory.id"]
        return local


def settled_counts(engine: ReplayEngine) -> dict:
    """``engine``'s record counts, every pending partition change filed and
    counted first (fast/pending.py): ``/local/counts``, :meth:`ImageSession.counts`."""
    engine.settle()
    return engine.record_counts()


def open_session(path, *, until_offset: int | None = None, until_time: int | None = None,
                 show_secrets: bool = False,
                 progress: Callable[[int, int], None] | None = None,
                 limit_options: tuple[str, str] = ("--until-offset", "--until-time")) -> Session:
    """Load ``path`` (file or directory) and return its :class:`Session`.
    Raises :class:`MetashellError` (one-line message) if nothing can be read,
    or if ``until_offset``/``until_time`` is before the oldest point the
    files can rebuild (messages name them as ``limit_options``)."""
    limit = Limit(until_offset, until_time, *limit_options)
    check_not_before(path, limit)
    with no_cyclic_gc():
        return _open(path, limit, show_secrets, progress)


def _refuse_foreign_records(path, tally) -> None:
    """:class:`InputError` when records were read and not one is a metadata
    record (each undecodable as one): a topic's own log (its messages) or some
    other log in Kafka's format, not the metadata log. A warning per record
    and an empty tree would say nothing of what is wrong."""
    if tally.applied or not tally.skipped or tally.skipped != len(tally.problems):
        return
    if not all(p.message.startswith("undecodable ") for p in tally.problems):
        return
    first = tally.problems[0]
    raise InputError(path, (
        f"not the metadata log: none of its {tally.skipped} records is a metadata record "
        f"({first}); a topic's partition log? point at __cluster_metadata-0/ or the "
        "directory holding it"))


def _open(path, limit: Limit, show_secrets, progress) -> Session:
    until_offset, until_time = limit.offset, limit.time
    plan = inputs.plan(path, until_offset=until_offset, offset_option=limit.offset_option)
    if until_time is not None and plan.snapshot is not None and plan.kind in ("logdir", "partition-dir"):
        plan = _plan_for_time(plan, until_time)
    findings = Findings()
    total = sum(_size(f) for f in plan.files) or 1
    engine, plan, loader = _load_snapshot(plan, until_offset, until_time, total, progress, findings)
    findings.extend((n for n in plan.notes if n not in plan.problems), problems=False)
    findings.extend(plan.problems, problems=True)
    newest = plan.segments[-1] if plan.segments else None
    for seg in plan.segments:
        if engine.reached_limit:
            break
        loader.segment(engine, seg, findings, newest=seg is newest)
    engine.finish()
    _refuse_foreign_records(path, engine.tally)
    _check_log_end(plan, engine, loader.log_end, findings)
    beyond = past_end(limit, Point(engine.image.last_offset, engine.image.last_time),
                      read_to_end=not engine.reached_limit
                      and plan.segments[-1:] == plan.all_segments[-1:])
    if beyond is not None:
        findings.problem(beyond)
    _find_leader(engine.image.quorum, plan,
                 time_travel=until_offset is not None or until_time is not None)
    if plan.kind == "snapshot" and plan.snapshot is None and not plan.segments:
        raise InputError(path, "nothing to load")
    source = str(Path(path))
    return Session(source, plan, engine, findings, show_secrets)


def _load_snapshot(plan, until_offset, until_time, total, progress, findings: Findings):
    """A new engine with the plan's snapshot applied: ``(engine, plan,
    loader)``. In a directory, a damaged or incomplete snapshot falls back
    to the next older one, or to the log from its start (the plan returned
    is the one used); a file given alone loads what it holds, with a
    warning."""
    in_dir = plan.kind in ("logdir", "partition-dir")
    while True:
        loader = Loader(total, progress)
        engine = ReplayEngine(until_offset=until_offset, until_time=until_time)
        snap = plan.snapshot
        try:
            if snap is not None:
                loader.snapshot(engine, snap, findings, strict=in_dir)
            return engine, plan, loader
        except CorruptDataError as e:
            if not in_dir:
                raise
            older = [c for c in plan.snapshot_candidates if c.end_offset < (snap.end_offset or 0)]
            plan = plan.with_snapshot(older[0] if older else None)
            instead = (f"falling back to {older[0].path.name}" if older else
                       "replaying the log from its start" if plan.segments else
                       "nothing else to load")
            findings.problem(f"{e}; snapshot {snap.path.name} is unusable, {instead}")


def _check_log_end(plan, engine: ReplayEngine, log_end: int | None, findings: Findings) -> None:
    """A directory's snapshot that ends past the end of its log: the files
    come from different runs of a cluster (or the log lost its end), and
    none of the log's records apply after the snapshot."""
    snap = plan.snapshot
    if (snap is None or snap.bootstrap or snap.end_offset is None or log_end is None
            or engine.reached_limit or engine.until_offset is not None
            or engine.until_time is not None or log_end >= snap.end_offset):
        return
    findings.problem(
        f"snapshot {snap.path.name} ends at offset {snap.end_offset - 1}, past the end of the "
        f"log (offset {log_end - 1}, in {plan.segments[-1].path.name}): the files may come from "
        "different runs of the cluster; no record of the log applies after the snapshot")


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
    start = side_files.read_epoch_starts(plan.all_segments[0].path.parent).get(epoch)
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


def _plan_for_time(plan, until_time: int):
    """For time travel in a directory: the newest snapshot whose last contained
    record was appended at or before ``until_time``."""
    for cand in plan.snapshot_candidates:
        ts = snapshot_timestamp(cand.path)
        if ts is not None and ts <= until_time:
            return plan if cand == plan.snapshot else plan.with_snapshot(cand)
    return plan.with_snapshot(None)


def _size(p: Path) -> int:
    try:
        return os.stat(p).st_size
    except OSError:
        return 0
