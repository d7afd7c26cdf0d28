"""Replaying records into the image with Kafka's semantics: the parts
wired together, and the one object the session holds.

The parts, along Kafka's seams (``docs/architecture.md`` walks them):

* :class:`~.batch_loader.BatchLoader` (Kafka's ``MetadataBatchLoader``):
  batches, snapshot boundaries, metadata transactions, time-travel
  limits, provenance;
* :class:`~.delta.Delta` (``MetadataDelta.replay``): a record applied by
  the rule of its type, one module per entity in :mod:`.entities`
  (``*Delta.replay``); counts and problems in a :class:`~.problems.Tally`;
* :class:`~.folding.PartitionFolder` (``PartitionRegistration.merge``):
  a partition's records folded when someone looks, what the image's
  topics ask;
* :class:`~.kept.KeptReplay`: a snapshot's kept runs applied when read;
* the fast path's side, through its door (:mod:`metashell.fast.door`):
  the record store, deferred entries applied (``EntryReplay``), the log's
  pending changes filed (``ChangeFiler``), ``summary``'s counts from bytes
  (``TopicCounts``), refs read back as records (``Refs``).
"""

from __future__ import annotations

from functools import partial

from ..fast.door import (ChangeFiler, Counts, Entries, EntryReplay, Filer, RecordStore, Refs,
                         Store, StoreRefs, TopicCounts)
from .batch_loader import BatchLoader
from .delta import Delta
from .folding import PartitionFolder
from .image import Image, TopicState
from .kept import KeptReplay
from .problems import Tally


class ReplayEngine:
    """One load's replay: feed it batches, read its image."""

    def __init__(self, *, until_offset: int | None = None, until_time: int | None = None,
                 store: RecordStore | None = None):
        self.store: Store = store if store is not None else RecordStore()
        self.tally = tally = Tally()
        self.refs: StoreRefs = Refs(self.store)
        self.filer: Filer = ChangeFiler(self.refs, tally)
        self.topic_source = PartitionFolder(self.refs, self.filer)
        new_image = partial(_wired_image, self.refs, KeptReplay(self.refs, tally), self.filer)
        self.delta = Delta(new_image(), tally, self.topic_source, self.filer, EntryReplay.partition_key)
        self.entries: Entries = EntryReplay(self.delta, self.refs, self.filer, TopicState)
        self.counts: Counts = TopicCounts(self.store, self.topic_source)
        self.loader = BatchLoader(self.delta, self.entries, new_image,
                                  until_offset=until_offset, until_time=until_time)

    # -- what the loader and the delta hold -------------------------------------------

    @property
    def image(self) -> Image:
        return self.delta.image

    @property
    def problems(self) -> list:
        return self.tally.problems

    @property
    def applied(self) -> int:
        return self.tally.applied

    @property
    def skipped(self) -> int:
        return self.tally.skipped

    @property
    def by_type(self) -> dict:
        return self.tally.by_type

    @property
    def aborted(self) -> int:
        return self.loader.aborted

    @property
    def source(self) -> str:
        """Label for problems (the file being read)."""
        return self.tally.source

    @source.setter
    def source(self, value: str) -> None:
        self.tally.source = value

    @property
    def on_change(self):
        """None, or ``on_change(key, record)`` called for each record applied
        through the general path (``watch`` in live mode; see :mod:`.delta`)."""
        return self.delta.on_change

    @on_change.setter
    def on_change(self, value) -> None:
        self.tally.on_change = self.delta.on_change = value

    @property
    def until_offset(self) -> int | None:
        return self.loader.until_offset

    @property
    def until_time(self) -> int | None:
        return self.loader.until_time

    @property
    def reached_limit(self) -> bool:
        return self.loader.reached_limit

    @property
    def transactions(self) -> list:
        """(begin, end) offsets of the metadata transactions applied (``rewind``)."""
        return self.loader.transactions

    @property
    def _changes(self):
        """The log's pending partition changes (fast/pending.py)."""
        return self.filer.changes

    # -- feeding ----------------------------------------------------------------------

    def begin_snapshot(self, end_offset: int | None, timestamp: int | None, epoch: int = -1) -> None:
        self.loader.begin_snapshot(end_offset, timestamp, epoch)

    def end_snapshot(self) -> None:
        self.loader.end_snapshot()

    def apply_batch(self, batch) -> bool:
        """Apply one batch; False once the time-travel limit is passed."""
        return self.loader.apply_batch(batch)

    def apply(self, rec, header=None, in_snapshot: bool = False) -> None:
        """Apply one record (tests, ``rewind``)."""
        self.loader.apply(rec, header, in_snapshot)

    def finish(self) -> None:
        """End of input: an open transaction is dropped, as Kafka does."""
        self.loader.finish()

    def settle(self) -> None:
        """File every pending partition change, in log order."""
        self.filer.settle()

    # -- what commands ask --------------------------------------------------------------

    def fold_partition(self, recs):
        return self.topic_source.fold_partition(recs)

    def partition_history(self, recs) -> list:
        """A partition's records (as filed under it), as :class:`Record` objects."""
        return self.refs.records(recs)

    def config_values(self, name: str) -> dict:
        return self.image.kept_reader.config_values(self.image, name)

    def run_counts(self, topic):
        return self.counts.run_counts(topic)

    def filed_counts(self, topic):
        return self.counts.filed_counts(topic)

    def pending_effects(self):
        return self.entries.pending_effects()

    def record_counts(self) -> dict:
        """How many records were applied, skipped and dropped, by type; the
        pending partition changes counted as applied (``summary`` makes
        sure each names a partition that exists) and a snapshot's records
        kept unread (each checked to apply)."""
        self.image.kept_reader.check(self.image)
        tally = self.tally
        by_type = dict(tally.by_type)
        pending = self.entries.pending_count()
        if pending:
            by_type["PartitionChangeRecord"] = by_type.get("PartitionChangeRecord", 0) + pending
        return {"recordsApplied": tally.applied + pending, "recordsSkipped": tally.skipped,
                "recordsDropped": self.loader.aborted, "byType": dict(sorted(by_type.items()))}

    def close(self) -> None:
        """Let go of the image and the files. Nothing in the image holds the
        engine (its lazy parts ask the fast path's objects, which hold no
        image), and no part holds a part that holds it back (no cycle), so
        dropping them frees a whole cluster at once by reference counting:
        the store's readers with it, and their maps and descriptors, unless
        an image still read elsewhere (a ``diff`` baseline rewound from this
        replay) holds the store. Every part is dropped, so that an engine
        kept after close (a closed session still named somewhere) holds no
        file open. A closed engine is not used again."""
        self.delta.image = None
        self.store = self.refs = self.topic_source = self.filer = None
        self.delta = self.entries = self.counts = self.loader = None


def _wired_image(refs: StoreRefs, kept: KeptReplay, filer: Filer) -> Image:
    """A new, empty image whose lazy parts ask the fast path's objects
    (refs read back, kept runs applied), into which pending changes are filed."""
    image = Image(refs=refs, kept_reader=kept)
    filer.file_into(image)
    return image
