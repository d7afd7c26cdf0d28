"""What the layers above the fast path call on the objects its door offers
(:mod:`.door`), written down as :class:`typing.Protocol` classes: one per
offered class, holding every method and attribute used outside
``metashell/fast/`` and nothing else.

This is the whole interface between the general path's replay, views and
session and the fast path's shortcuts: a newcomer changing a shortcut keeps
these signatures, and may change anything behind them. The offered classes
are checked against it (``tests/unit/test_fast_interface.py``): each has
every member named here with the same parameters, and the modules outside
the package use no other member of them.

Only declarations: importing this module imports no shortcut.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, Protocol

if TYPE_CHECKING:
    from ..kraft.record import Record


class Store(Protocol):
    """A load's record store (``RecordStore``): the files opened for one
    load, and the records left in their bytes, read back when asked."""

    def open(self, path, **options):
        """A reader of ``path`` whose partition records are deferred to the store."""

    def file_numbers(self, paths) -> list[int]:
        """The store's numbers of the files opened from ``paths``."""

    def offset_before_time(self, time: int, files) -> "int | None":
        """The last offset of ``files`` whose batch is older than ``time`` (``--until-time``)."""

    def searchable(self, file_no: int) -> bool:
        """Whether file ``file_no``'s bytes can be searched (``find``)."""

    def data(self, ref: int, api: int = 3) -> "tuple[dict, int, int] | None":
        """``(fields, offset, timestamp)`` of the record ``ref`` names."""

    def run_data(self, ref: int, shape, n: int) -> "list | None":
        """:meth:`data` of each record of a run of ``n`` PartitionRecords."""

    def run_values(self, ref: int, shape, n: int) -> "tuple[bytes, tuple, tuple, tuple] | None":
        """``(raw topic id, layout, ints, uuids)`` of a run of ``n`` PartitionRecords."""

    def run_changes(self, ref: int, shape, n: int) -> "tuple[list, list] | None":
        """``(offsets, timestamps)`` of a run of ``n`` PartitionRecords."""

    def run_counts(self, ref: int, shape, n: int) -> "tuple[int, int, tuple] | None":
        """``(replicas, isr, leaders)`` counted over a run of ``n`` PartitionRecords."""

    def value_bytes(self, ref: int) -> bytes:
        """The undecoded value of the record ``ref`` names."""

    def run_refs(self, ref: int, n: int) -> list[int]:
        """The refs of a snapshot's run of ``n`` records kept unread."""

    def config_fields(self, ref: int, n: int) -> tuple:
        """The resources and names of a kept run of ``n`` ConfigRecords."""

    def config_values(self, ref: int, n: int, name: bytes) -> "dict | None":
        """The values of a kept run of ``n`` ConfigRecords of one resource ``name``."""

    def acls_decode(self, ref: int, n: int) -> bool:
        """Whether each of a kept run of ``n`` AccessControlEntryRecords decodes."""

    def refs_after(self, offset: int, files) -> Callable[[int], bool]:
        """A test for whether a ref of ``files`` names a record after ``offset``."""

    def records_after(self, offset: int, files) -> "Iterator[Record]":
        """The records of ``files`` with offsets after ``offset`` (``rewind``)."""


class StoreRefs(Protocol):
    """Refs read back as records (``Refs``), stamped as their snapshot's."""

    store: Store

    def stamp_file(self, file_no: int, stamp: tuple) -> None:
        """The records of file ``file_no`` (a snapshot) show ``stamp``, ``(offset, time)``."""

    def stamp(self, ref: int) -> "tuple | None":
        """The ``(offset, time)`` the snapshot of ``ref`` stamps its records with."""

    def record(self, ref: int) -> "Record":
        """The record ``ref`` names, stamped."""

    def stamped(self, ref: int, offset: int, timestamp: int) -> tuple[int, int]:
        """The offset and time the record ``ref`` shows."""

    def records(self, recs) -> "list[Record]":
        """A partition's or an entity's filed records (refs or records) as records."""


class PendingChangesSide(Protocol):
    """A log's batches of partition changes kept unfiled (``PendingChanges``)."""

    batches: list

    def add(self, file_no: int, start: int, end: int, entries: list) -> None:
        """Keep the change entries of the batch at ``[start, end)`` of file ``file_no``."""


class Filer(Protocol):
    """Deferred partition records and pending changes filed (``ChangeFiler``)."""

    changes: PendingChangesSide

    def file_into(self, image) -> None:
        """Pending changes are filed into ``image`` from now on."""

    def file_topic(self, t) -> None:
        """File the pending changes of topic ``t`` (it is being looked at)."""

    def settle(self) -> None:
        """File every pending partition change, in log order."""


class Entries(Protocol):
    """Deferred entries applied as the general path's rules would (``EntryReplay``)."""

    store: Store
    refs: StoreRefs
    filer: Filer
    changes: PendingChangesSide

    @staticmethod
    def partition_key(rec) -> "tuple[str, int] | None":
        """(topic id, partition id) of a PartitionRecord or PartitionChangeRecord."""

    def apply(self, h, records: list, stamp: "tuple | None", in_snapshot: bool, loader) -> bool:
        """Apply a batch's deferred entries; False when the general path must."""

    def only_changes(self, batch_records: list) -> bool:
        """Whether a batch's records are all deferred PartitionChangeRecords."""

    def settle_before(self, batch_records: list) -> None:
        """File the pending changes before a batch touching topics or partitions."""

    def as_records(self, batch_records: list) -> list:
        """A batch's records with every deferred entry read back as a record."""

    def defer_changes(self, h, entries, file_no: int, until_offset: "int | None"):
        """Keep a batch of deferred partition changes unfiled."""

    def pending_effects(self):
        """What the pending partition changes do (``summary``), or None."""

    def pending_count(self) -> int:
        """How many partition changes are pending."""


class Counts(Protocol):
    """``summary``'s counts of a topic's partitions from their bytes (``TopicCounts``)."""

    def run_counts(self, topic) -> "tuple[list, bytes, bool] | None":
        """The counts of a topic whose partitions are all in untouched runs, or None."""

    def filed_counts(self, topic) -> "tuple[list, bytes, bool]":
        """The counts of a topic whose partitions were filed."""


class RunTextMaker(Protocol):
    """The texts of a run's partitions, one format per layout (``RunTexts``)."""

    def __call__(self, topic_id: str, layout: tuple, ints: tuple, uuids: tuple,
                 nl: "str | None" = "\n") -> "list[str] | None":
        """The text of each partition of a run of topic ``topic_id``, or None."""
