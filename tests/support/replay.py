"""Logs, engines and trees for the replay, tree and session tests (no tests here).

Records come from :mod:`tests.support.records`; a :class:`Log` writes them
with the project's own writer (:mod:`metashell.kraft.writer`) into a
temporary file, which is loaded the way the shell loads it
(``open_session``), or fed to a :class:`ReplayEngine` with batches from
:func:`metashell.loader.reader.read_file`.
"""

from __future__ import annotations

from pathlib import Path

from metashell.fs.root import build_root
from metashell.fs.walk import walk
from metashell.loader.reader import read_file
from metashell.kraft.writer import LogWriter, segment_name, snapshot_bytes, snapshot_name
from metashell.replay.engine import ReplayEngine
from metashell.session.files import open_session

TS0 = 1_700_000_000_000          # append time of the first batch (ms)


# --------------------------------------------------------------------------- logs

class Log:
    """A segment built batch by batch; each ``add`` is one batch whose append
    time defaults to ``TS0 + 1000 * <batch number>``."""

    def __init__(self, base_offset: int = 0, epoch: int = 1):
        self.w = LogWriter(base_offset, epoch=epoch, timestamp=TS0)
        self.base = base_offset
        self.batches = 0

    @property
    def next_offset(self) -> int:
        return self.w.next_offset

    def add(self, *records, ts: int | None = None) -> int:
        """Append one batch of ``records``; returns the offset of its first record."""
        if ts is None:
            ts = TS0 + 1000 * self.batches
        self.batches += 1
        return self.w.batch(list(records), timestamp=ts)

    def each(self, *records, ts: int | None = None) -> list[int]:
        """One batch per record; returns their offsets."""
        return [self.add(r, ts=ts) for r in records]

    def leader(self, leader_id: int, voters=(1, 2, 3), epoch: int | None = None) -> int:
        self.batches += 1
        return self.w.leader_change(leader_id, list(voters), epoch=epoch,
                                    timestamp=TS0 + 1000 * (self.batches - 1))

    def write(self, directory: Path, name: str | None = None) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / (name or segment_name(self.base))
        self.w.write(path)
        return path


def load(tmp_path: Path, *batches, **session_kw):
    """Write ``batches`` (each a record or a list of records = one batch) as a
    segment from offset 0 and open it."""
    log = Log()
    for b in batches:
        log.add(*(b if isinstance(b, (list, tuple)) else [b]))
    return open_session(log.write(tmp_path), **session_kw)


def write_snapshot(directory: Path, end_offset: int, records, *, epoch: int = 1,
                   timestamp: int = TS0, **kw) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / snapshot_name(end_offset, epoch)
    path.write_bytes(snapshot_bytes(records, epoch=epoch, timestamp=timestamp, **kw))
    return path


def engine_over(*paths, deferred: bool = False, first_is_snapshot: bool = False,
                snapshot_end: int | None = None, **engine_kw) -> ReplayEngine:
    """Replay whole files with a bare engine (segments as log batches):
    record by record, or with ``deferred`` through the engine's record store
    (the fast path's deferred reads). With ``first_is_snapshot`` the first
    file is applied as a snapshot ending at ``snapshot_end`` (None: unknown,
    its records keep their own offsets), as the session applies one."""
    eng = ReplayEngine(**engine_kw)
    for i, p in enumerate(paths):
        snapshot = first_is_snapshot and i == 0
        if snapshot:
            eng.begin_snapshot(snapshot_end, None, 1)
        for batch in eng.store.open(p, lazy=True) if deferred else read_file(p, lazy=True):
            if not eng.apply_batch(batch):
                break
        if snapshot:
            eng.end_snapshot()
    eng.finish()
    return eng


def same_replay(paths, **engine_kw) -> ReplayEngine:
    """Replay ``paths`` deferred and record by record and check that both
    show the same tree, then, every pending change filed (a change of no
    known partition is reported when it is filed), the same counts, problems
    and position; returns the deferred one."""
    a, b = engine_over(*paths, deferred=True, **engine_kw), engine_over(*paths, **engine_kw)
    assert leaves(build_root(a.image)) == leaves(build_root(b.image))
    a.settle()
    assert (a.applied, a.skipped, a.aborted, a.by_type) == (b.applied, b.skipped, b.aborted, b.by_type)
    assert problems(a) == problems(b)
    assert (a.image.last_offset, a.image.last_time, a.image.data_time, a.image.last_epoch) == (
        b.image.last_offset, b.image.last_time, b.image.data_time, b.image.last_epoch)
    return a


def shown(eng: ReplayEngine) -> tuple:
    """All an engine shows: its tree, its counts and its position, every
    pending change filed."""
    tree = leaves(build_root(eng.image))
    eng.settle()
    return (tree, eng.applied, eng.skipped, eng.aborted, eng.by_type,
            eng.image.last_offset, eng.image.last_time)


# --------------------------------------------------------------------------- trees

def node(root, path: str):
    """The node at an absolute ``path`` (None if absent)."""
    n = root
    for part in [p for p in path.split("/") if p]:
        n = n.child(part)
        if n is None:
            return None
    return n


def cat(root, path: str):
    n = node(root, path)
    assert n is not None, f"{path}: no such node"
    assert not n.is_dir, f"{path}: is a directory"
    return n.value()


def ls(root, path: str) -> list[str]:
    n = node(root, path)
    assert n is not None, f"{path}: no such node"
    return n.children()


def leaves(root, tops=None, exclude=("registeredAt",)) -> dict:
    """``{path: value}`` of every file under the given top-level directories."""
    out = {}
    for top in tops or root.children():
        start = root.child(top)
        if start is None:
            continue
        for path, n in walk(start, "/" + top):
            if not n.is_dir and path.rsplit("/", 1)[-1] not in exclude:
                out[path] = n.value()
    return out


def problems(eng: ReplayEngine) -> list[str]:
    """An engine's problems as the shell words them."""
    return [str(p) for p in eng.problems]


def flat(value, path="") -> dict:
    """``-o json tree`` output as ``{path: leaf value}``: two trees compared
    path by path name the path that differs."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            out.update(flat(v, f"{path}/{k}"))
        return out
    return {path: value}
