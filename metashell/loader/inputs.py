"""What an input path is, and the plan for loading it.

A user may point the tool at (contract section 1, kraft-format.md 14-16):

* a ``*.log`` segment (or any file: Kafka's shell reads whatever it is given),
* a ``<20-digit end offset>-<10-digit epoch>.checkpoint`` snapshot,
* a ``bootstrap.checkpoint`` (written by ``kafka-storage format``),
* a metadata log directory (``metadata.log.dir``, holding ``__cluster_metadata-0/``),
* the ``__cluster_metadata-0/`` partition directory itself, or any directory
  holding segments and snapshots.

:func:`classify` names the kind; :func:`plan` turns a path into a
:class:`LoadPlan`: which snapshot, which segments and in what order, plus
``meta.properties`` and ``quorum-state`` for display (read by ``side_files``). A directory is planned
the way a restarting broker loads its metadata log: the newest complete
snapshot, then the segments holding records from the snapshot's end offset on.

Everything here is read-only: files are opened with ``"rb"`` and nothing is
ever created, renamed, locked or deleted in the directory being read (not even
the ``.lock`` a running Kafka holds; planning works next to a live broker).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import InputError
from .side_files import (META_PROPERTIES, METADATA_TOPIC_ID, QUORUM_STATE,
                         read_meta_properties, read_partition_topic_id, read_quorum_state)

__all__ = [
    "PARTITION_DIR", "BOOTSTRAP_NAME", "KINDS",
    "SnapshotFile", "SegmentFile", "LoadPlan",
    "parse_snapshot_name", "parse_segment_name", "classify", "plan",
]

PARTITION_DIR = "__cluster_metadata-0"
BOOTSTRAP_NAME = "bootstrap.checkpoint"
KINDS = ("segment", "snapshot", "bootstrap", "logdir", "partition-dir")

EXPECTED = ("expected a *.log segment, a *.checkpoint snapshot, bootstrap.checkpoint, "
            "or a metadata log directory holding __cluster_metadata-0/")

_SNAPSHOT_RE = re.compile(r"([0-9]{20})-([0-9]{10})\.checkpoint")
_SNAPSHOT_PREFIX_RE = re.compile(r"([0-9]{20})-([0-9]{10})")
_SEGMENT_RE = re.compile(r"([0-9]{20})\.log")

# ---------------------------------------------------------------------------
# names

def parse_snapshot_name(name: str) -> tuple[int, int] | None:
    """``(end_offset, epoch)`` of ``OOOOOOOOOOOOOOOOOOOO-EEEEEEEEEE.checkpoint``, else None.

    The end offset is exclusive: the snapshot holds log offsets < end_offset.
    """
    m = _SNAPSHOT_RE.fullmatch(name)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2))


def parse_segment_name(name: str) -> int | None:
    """Base offset of ``<20 digits>.log``, else None."""
    m = _SEGMENT_RE.fullmatch(name)
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------------------
# plan data

@dataclass(frozen=True)
class SnapshotFile:
    """A snapshot to load first.

    ``end_offset`` (exclusive) and ``epoch`` come from the file name; they are
    None for a file whose name does not follow Kafka's pattern. A
    ``bootstrap.checkpoint`` used as the starting state has ``bootstrap=True``
    and end offset 0 (its records precede the log).
    """

    path: Path
    end_offset: int | None
    epoch: int | None
    bootstrap: bool = False

    @property
    def last_offset(self) -> int | None:
        """Highest log offset the snapshot covers (end_offset - 1)."""
        return None if self.end_offset is None else self.end_offset - 1


@dataclass(frozen=True)
class SegmentFile:
    """A log segment; ``base_offset`` from the name (None for other names)."""

    path: Path
    base_offset: int | None


@dataclass
class LoadPlan:
    """What to read, in order: ``snapshot`` (if any), then ``segments``.

    ``skip_before_offset`` applies to segment records only: replay those with
    offset >= it (it is the snapshot's end offset; 0 without a snapshot).
    Snapshot end offsets written by Kafka 3.x may fall inside a batch, so the
    caller skips per record, not per batch.

    Falling back: ``snapshot_candidates`` lists every complete snapshot that
    fits the plan (respecting ``until_offset``), newest first; ``snapshot`` is
    the first of them. When loading it fails (a damaged file), the caller
    calls ``plan.with_snapshot(plan.snapshot_candidates[1])`` (or
    ``with_snapshot(None)`` to replay the log from its start) to get the plan
    for an older snapshot with the segments and skip offset recomputed.

    ``bootstrap`` is the log dir's ``bootstrap.checkpoint`` (informational,
    unless it is also ``snapshot`` because the log is empty).
    ``meta_properties`` / ``quorum_state`` are None when absent or malformed
    (malformed adds a note). ``notes`` are one-line remarks for the user;
    ``problems`` those of them that mean state is missing from the image
    (a gap in the log), which ``--strict`` fails on (``metashell.session.findings``).
    """

    kind: str
    path: Path
    snapshot: SnapshotFile | None = None
    segments: list[SegmentFile] = field(default_factory=list)
    bootstrap: Path | None = None
    meta_properties: dict | None = None
    quorum_state: dict | None = None
    notes: list[str] = field(default_factory=list)
    skip_before_offset: int = 0
    snapshot_candidates: list[SnapshotFile] = field(default_factory=list)
    #: every segment of the partition directory, sorted (for with_snapshot)
    all_segments: list[SegmentFile] = field(default_factory=list)
    until_offset: int | None = None
    #: how notes name until_offset (diff's other side is --from-offset)
    offset_option: str = "--until-offset"
    #: notes that hold whatever snapshot is chosen (with_snapshot keeps them)
    base_notes: list[str] = field(default_factory=list, repr=False)
    #: the notes that are problems: records missing between the snapshot and the log
    problems: list[str] = field(default_factory=list)

    @property
    def never_started(self) -> bool:
        """A node formatted (``kafka-storage format``) but never started: a
        log dir holding ``bootstrap.checkpoint`` and no ``__cluster_metadata-0/``.
        Its image is the bootstrap records; nothing is wrong with it."""
        return (self.kind == "logdir" and self.snapshot is not None and self.snapshot.bootstrap
                and not (self.path / PARTITION_DIR).is_dir())

    @property
    def files(self) -> list[Path]:
        """The files to read, in load order."""
        out = [self.snapshot.path] if self.snapshot else []
        return out + [s.path for s in self.segments]

    def with_snapshot(self, snapshot: SnapshotFile | None) -> "LoadPlan":
        """The same plan starting from another snapshot (or none, for the whole log)."""
        if self.kind not in ("logdir", "partition-dir"):
            raise ValueError("with_snapshot applies to directory plans only")
        new = replace(self, snapshot=snapshot, notes=list(self.base_notes), problems=[])
        _choose_segments(new)
        return new


# ---------------------------------------------------------------------------
# classify

_REJECTED_SUFFIXES = {
    ".index": "an offset index (.index) of a log segment, not metadata records",
    ".timeindex": "a time index (.timeindex) of a log segment, not metadata records",
    ".txnindex": "a transaction index (.txnindex) of a log segment, not metadata records",
    ".snapshot": ("a producer-state snapshot (<offset>.snapshot), not a metadata snapshot; "
                  "metadata snapshots are named <offset>-<epoch>.checkpoint"),
}

_REJECTED_NAMES = {
    QUORUM_STATE: "the Raft quorum state (leader, epoch, voters), not metadata records",
    META_PROPERTIES: "the log directory's identity file (node.id, cluster.id), not metadata records",
    "leader-epoch-checkpoint": "the leader epoch cache of the log, not metadata records",
    "partition.metadata": "the partition's topic id file, not metadata records",
    ".lock": "the lock file a running Kafka holds, not metadata records",
}


def _stat(path: Path) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InputError(path, "no such file or directory (dangling symbolic link)") from None
        raise InputError(path, "no such file or directory") from None
    except PermissionError:
        raise InputError(path, "permission denied") from None
    except OSError as e:
        raise InputError(path, f"cannot access: {e.strerror or e}") from None


def _list_dir(path: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except PermissionError:
        raise InputError(path, "cannot read directory: permission denied") from None
    except OSError as e:
        raise InputError(path, f"cannot read directory: {e.strerror or e}") from None


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _check_readable_file(path: Path) -> None:
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise InputError.unreadable(path, e) from None


def _is_metadata_name(name: str) -> bool:
    return parse_segment_name(name) is not None or parse_snapshot_name(name) is not None


def _rejected_file(path: Path) -> str | None:
    """Why a file is not loadable as metadata records (None when it may be)."""
    name = path.name
    if name in _REJECTED_NAMES:
        what = _REJECTED_NAMES[name]
        return (f"this is {what}; pass the metadata log directory, or a *.log segment "
                f"or *.checkpoint snapshot")
    for suffix, what in _REJECTED_SUFFIXES.items():
        if name.endswith(suffix):
            hint = "pass a *.log segment or *.checkpoint snapshot, or the directory"
            if suffix != ".snapshot":
                seg = path.with_name(name[: -len(suffix)] + ".log")
                if seg.is_file():
                    hint = f"pass the segment {seg.name}, or the directory"
            return f"this is {what}; {hint}"
    return None


def classify(path) -> str:
    """The kind of input ``path`` is: one of :data:`KINDS`.

    * ``"bootstrap"``: a file named ``bootstrap.checkpoint``;
    * ``"snapshot"``: a file whose name ends in ``.checkpoint`` (also
      ``.checkpoint.part`` / ``.checkpoint.deleted`` when named explicitly);
    * ``"segment"``: a ``*.log`` file, or any other file (Kafka's shell reads
      any file), except the known non-metadata files of a log directory
      (indexes, producer-state snapshots, quorum-state, meta.properties, …),
      which raise :class:`InputError` saying what they are;
    * ``"logdir"``: a directory holding ``__cluster_metadata-0/``, or a
      formatted but never started one (holding ``bootstrap.checkpoint`` and
      no segments);
    * ``"partition-dir"``: the ``__cluster_metadata-0`` directory itself, or
      any directory holding segments ``<20-digit offset>.log`` or snapshots
      ``<offset>-<epoch>.checkpoint`` (files with other names, such as a
      ``server.log``, do not make a directory a metadata directory).

    Raises :class:`InputError` for a missing or unreadable path and for a
    directory without metadata files.
    """
    path = Path(path)
    st = _stat(path)
    if stat.S_ISDIR(st.st_mode):
        return _classify_directory(path)
    if not stat.S_ISREG(st.st_mode):
        raise InputError(path, "not a regular file or directory; " + EXPECTED)
    reason = _rejected_file(path)
    if reason is not None:
        raise InputError(path, reason)
    _check_readable_file(path)
    name = path.name
    if name == BOOTSTRAP_NAME:
        return "bootstrap"
    if name.endswith((".checkpoint", ".checkpoint.part", ".checkpoint.deleted")):
        return "snapshot"
    return "segment"


def _classify_directory(path: Path) -> str:
    """``"logdir"`` or ``"partition-dir"`` for a directory (see
    :func:`classify`), or :class:`InputError` saying why it is neither."""
    entries = _list_dir(path)
    names = {e.name: e for e in entries}
    part = names.get(PARTITION_DIR)
    if part is not None and _is_dir(part):
        return "logdir"
    if path.name == PARTITION_DIR:
        return "partition-dir"
    _refuse_topic_partition(path)
    other_logs = []
    for e in entries:
        if _is_metadata_name(e.name) and _is_file(e):
            return "partition-dir"
        if e.name.endswith((".log", ".checkpoint")) and e.name != BOOTSTRAP_NAME:
            other_logs.append(e.name)
    boot = names.get(BOOTSTRAP_NAME)
    if boot is not None and _is_file(boot):
        return "logdir"
    if META_PROPERTIES in names:
        raise InputError(path, (
            "a Kafka log directory without __cluster_metadata-0/ or bootstrap.checkpoint: "
            "not the metadata log directory (see metadata.log.dir); " + EXPECTED))
    if other_logs:
        raise InputError(path, (
            f"no KRaft metadata files in this directory ({sorted(other_logs)[0]} is not "
            f"named like a segment <20-digit offset>.log or a snapshot "
            f"<offset>-<epoch>.checkpoint; pass a file directly to read it anyway); "
            + EXPECTED))
    raise InputError(path, "no KRaft metadata files in this directory; " + EXPECTED)


def _refuse_topic_partition(path: Path) -> None:
    """:class:`InputError` when ``path`` is an ordinary topic's partition
    directory (``orders-0/`` beside ``__cluster_metadata-0/`` in a broker's data
    dir): its ``partition.metadata`` names a topic id other than the metadata
    log's, and its records are a topic's messages, not metadata records."""
    topic_id = read_partition_topic_id(path)
    if topic_id is None or topic_id == METADATA_TOPIC_ID:
        return
    topic, _, number = path.name.rpartition("-")
    which = (f"topic {topic!r} partition {number}" if topic and number.isdigit()
             else "an ordinary topic's partition")
    raise InputError(path, (
        f"not the metadata log: the log of {which} (partition.metadata names topic id "
        f"{topic_id}, not __cluster_metadata's {METADATA_TOPIC_ID}); "
        f"point at {PARTITION_DIR}/ or the directory holding it"))


# ---------------------------------------------------------------------------
# plan

def plan(path, until_offset: int | None = None, offset_option: str = "--until-offset") -> LoadPlan:
    """The load plan for ``path`` (see :class:`LoadPlan`).

    A file gives a plan of that one file (``until_offset`` is then applied
    by the replay only). A directory gives "newest usable snapshot + the
    segments from its end offset on" (kraft-format.md 14.1): with
    ``until_offset``, the newest snapshot holding only offsets <= it
    (``end_offset - 1 <= until_offset``), and segments that start after
    ``until_offset`` are left out. Segments: every one whose records may have
    an offset >= the snapshot's end offset, i.e. all but those followed by a
    segment whose base offset is <= that end offset.

    When the log is empty or absent and the log dir holds a
    ``bootstrap.checkpoint``, that file is the plan's snapshot. Older
    snapshots are in ``snapshot_candidates`` for :meth:`LoadPlan.with_snapshot`.
    Raises :class:`InputError` (via :func:`classify`) for unusable paths.
    """
    path = Path(path)
    kind = classify(path)
    p = LoadPlan(kind=kind, path=path, until_offset=until_offset, offset_option=offset_option)
    if kind == "segment":
        p.segments = [SegmentFile(path, _segment_base(path.name))]
        p.all_segments = list(p.segments)
        return p
    if kind == "bootstrap":
        p.snapshot = SnapshotFile(path, 0, 0, bootstrap=True)
        p.bootstrap = path
        p.snapshot_candidates = [p.snapshot]
        return p
    if kind == "snapshot":
        end, epoch = _snapshot_id(path.name) or (None, None)
        p.snapshot = SnapshotFile(path, end, epoch)
        p.snapshot_candidates = [p.snapshot]
        p.skip_before_offset = end or 0
        if until_offset is not None and end is not None and end - 1 > until_offset:
            p.notes.append(
                f"{path.name} holds offsets up to {end - 1}, beyond {offset_option} "
                f"{until_offset}: a snapshot can only be loaded whole")
        return p

    if kind == "logdir":
        logdir = path
        partdir = path / PARTITION_DIR
    else:
        partdir = path
        logdir = path.parent if path.name == PARTITION_DIR else path
    _plan_directory(p, logdir, partdir)
    return p


def _segment_base(name: str) -> int | None:
    base = parse_segment_name(name)
    if base is None and name.endswith(".log.deleted"):
        base = parse_segment_name(name[: -len(".deleted")])
    return base


def _snapshot_id(name: str) -> tuple[int, int] | None:
    parsed = parse_snapshot_name(name)
    if parsed is None and ".checkpoint" in name:
        m = _SNAPSHOT_PREFIX_RE.match(name)
        if m:  # <id>-<random>.checkpoint.part / <id>.checkpoint.deleted
            parsed = int(m.group(1)), int(m.group(2))
    return parsed


def _plan_directory(p: LoadPlan, logdir: Path, partdir: Path) -> None:
    """Fill plan ``p`` of a log dir (``logdir``) or partition dir
    (``partdir``): its snapshots and segments, the files beside them, the
    snapshot to load (the newest within ``until_offset``) and the segments
    after it."""
    notes = p.base_notes
    snapshots, segments = _metadata_files(partdir, logdir, notes)
    p.all_segments = segments
    _read_side_files(p, logdir, partdir, notes)
    if not snapshots and not segments:
        _plan_empty(p, partdir, notes)
        return
    u = p.until_offset
    candidates = [s for s in snapshots if u is None or s.end_offset - 1 <= u]
    if u is not None and len(candidates) < len(snapshots):
        skipped = len(snapshots) - len(candidates)
        notes.append(f"{p.offset_option} {u}: {skipped} newer snapshot(s) not used")
    p.snapshot_candidates = candidates
    p.snapshot = candidates[0] if candidates else None
    if (p.snapshot is not None and p.snapshot.end_offset == 0 and not segments
            and p.bootstrap is not None):
        notes.append(f"the metadata log holds no records yet: {BOOTSTRAP_NAME} (not loaded) "
                     f"holds the records the first active controller will write")
    p.notes = list(notes)
    _choose_segments(p)


def _metadata_files(partdir: Path, logdir: Path, notes: list) -> tuple[list, list]:
    """The snapshots (newest first) and segments (by base offset) of
    ``partdir``; every other file Kafka leaves there is noted as ignored."""
    snapshots: list[SnapshotFile] = []
    segments: list[SegmentFile] = []
    other_deleted: list[str] = []
    entries = _list_dir(partdir) if partdir.is_dir() else []
    for e in sorted(entries, key=lambda e: e.name):
        name = e.name
        if not _is_file(e):
            continue
        full = partdir / name
        if name == BOOTSTRAP_NAME and partdir == logdir:
            continue  # handled as the log dir's bootstrap file (_read_side_files)
        parsed = parse_snapshot_name(name)
        if parsed is not None:
            snapshots.append(SnapshotFile(full, parsed[0], parsed[1]))
            continue
        base = parse_segment_name(name)
        if base is not None:
            segments.append(SegmentFile(full, base))
        elif name.endswith(".deleted") and not name.endswith((".checkpoint.deleted", ".log.deleted")):
            other_deleted.append(name)
        else:
            note = _ignored(name)
            if note is not None:
                notes.append(note)
    if other_deleted:
        shown = ", ".join(other_deleted[:3]) + (", …" if len(other_deleted) > 3 else "")
        notes.append(f"ignored {len(other_deleted)} other file(s) marked for deletion ({shown})")
    segments.sort(key=lambda s: s.base_offset)
    snapshots.sort(key=lambda s: (s.end_offset, s.epoch), reverse=True)
    return snapshots, segments


def _ignored(name: str) -> str | None:
    """The note on a file of a partition dir that is neither a snapshot nor
    a segment but looks like one Kafka left (None for any other file)."""
    if name.endswith(".checkpoint.part"):
        return f"ignored {name}: a snapshot that was still being written (Kafka deletes it on startup)"
    if name.endswith(".checkpoint.deleted"):
        return f"ignored {name}: a snapshot marked for deletion"
    if name.endswith(".log.deleted"):
        return f"ignored {name}: a segment marked for deletion"
    if name.endswith((".cleaned", ".swap")):
        return f"ignored {name}: a leftover of an interrupted segment rewrite"
    if name.endswith(".checkpoint"):
        return (f"ignored {name}: not a snapshot name "
                f"(expected <20-digit offset>-<10-digit epoch>.checkpoint)")
    if name.endswith(".log"):
        return f"ignored {name}: not a segment name (expected <20-digit offset>.log)"
    return None


def _read_side_files(p: LoadPlan, logdir: Path, partdir: Path, notes: list) -> None:
    """The bootstrap file, ``meta.properties`` and ``quorum-state`` beside
    the log; one that does not parse is noted and left out."""
    boot = logdir / BOOTSTRAP_NAME
    if boot.is_file():
        p.bootstrap = boot
    meta = logdir / META_PROPERTIES
    if meta.is_file():
        try:
            p.meta_properties = read_meta_properties(meta)
        except InputError as e:
            notes.append(f"ignored {META_PROPERTIES}: {e.message}")
    qs = partdir / QUORUM_STATE
    if qs.is_file():
        try:
            p.quorum_state = read_quorum_state(qs)
        except InputError as e:
            notes.append(f"ignored {QUORUM_STATE}: {e.message}")


def _plan_empty(p: LoadPlan, partdir: Path, notes: list) -> None:
    """A log with no snapshot and no segment: its bootstrap file, if any, is
    the plan's snapshot (the records the first active controller writes)."""
    where = f"{PARTITION_DIR}/" if p.kind == "logdir" else partdir.name
    if p.bootstrap is not None:
        state = ("is missing (the node was formatted but never started)"
                 if not partdir.is_dir() else "is empty")
        notes.append(f"{where} {state}: loading {BOOTSTRAP_NAME}, the records the first "
                     f"active controller writes into the log")
        p.snapshot = SnapshotFile(p.bootstrap, 0, 0, bootstrap=True)
        p.snapshot_candidates = [p.snapshot]
    else:
        notes.append(f"{where} holds no snapshot or segment: the metadata log is empty")
    p.notes = list(notes)


def _choose_segments(p: LoadPlan) -> None:
    """Fill ``segments``, ``skip_before_offset`` and snapshot-dependent notes."""
    segs = p.all_segments
    end = p.snapshot.end_offset if p.snapshot is not None and not p.snapshot.bootstrap else 0
    end = end or 0
    p.skip_before_offset = end
    chosen = []
    for i, seg in enumerate(segs):
        nxt = segs[i + 1].base_offset if i + 1 < len(segs) else None
        if nxt is not None and nxt <= end:
            continue  # wholly before the snapshot's end offset
        chosen.append(seg)
    u = p.until_offset
    if u is not None:
        later = [s for s in chosen if s.base_offset > u]
        if later:
            chosen = [s for s in chosen if s.base_offset <= u]
            p.notes.append(f"{p.offset_option} {u}: {len(later)} segment(s) starting after it "
                           f"not loaded")
    p.segments = chosen
    if chosen and chosen[0].base_offset > end:
        first = chosen[0]
        if p.snapshot is not None and not p.snapshot.bootstrap:
            gap = (f"gap: snapshot {p.snapshot.path.name} ends at offset {end - 1} but the next "
                   f"segment {first.path.name} starts at {first.base_offset}: records "
                   f"{end}-{first.base_offset - 1} are missing")
        else:
            gap = (f"the log starts at offset {first.base_offset} and no snapshot covers the "
                   f"records before it: state from offsets 0-{first.base_offset - 1} is missing")
        p.notes.append(gap)
        p.problems.append(gap)
