"""A log's partition changes, read but not yet filed under their partitions.

Filing a PartitionChangeRecord under its partition takes a few random
memory accesses into a million-partition image (about 2.5 us in Python),
a controller's log holds hundreds of thousands of them, and ``ls /topics``
needs none. So the replay keeps a log's batches of deferred changes as
they come (one append per batch) and files them when they are needed:

* all of them, in log order, before the replay applies anything else that
  creates, changes or removes a topic or a partition (the order of changes
  matters only against those), and for the counts and ``summary``
  (:meth:`~metashell.fast.change_filing.ChangeFiler.settle`);
* one topic's, when its partitions are first looked at: the topic's raw id
  is searched for in a copy of the pending batches' records, made as they
  come (``find``: one C call per occurrence, 4 ms for the 20 MiB of
  changes of the bench's log dir), and only the batches it
  occurs in are looked at. Once searches have scanned
  :data:`SEARCH_BYTES_PER_CHANGE` bytes per pending change (about a third
  of what filing them all costs) the rest are filed at once, so that
  walking every topic costs a bounded amount more than filing everything.

A change that cannot be filed (no such partition) is reported when it is
filed, as a lazily decoded partition record is reported when it is folded.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Callable

from ..kraft.batch import HEADER_SIZE
from .change_batches import ChangeBatch
from .change_effects import ChangeEffects
from .partition_change import of_fields
from . import deferred
from .deferred import PARTITION_ID, RAW_TOPIC_ID, REF

# bytes searched per pending change before the rest are filed at once
SEARCH_BYTES_PER_CHANGE = 4096
# changes in batches already read (decoded one by one for their effects, ~10 us
# each) beyond which ``summary`` files them all instead
MAX_DECODED_EFFECTS = 4096
# effects reduced at a time: their memory is used again for the next (a log's
# 500,000 would otherwise take 95 MiB at once)
EFFECTS_AT_ONCE = 8192


class PendingChanges:
    """The deferred change entries of a log's batches, in log order, and a
    copy of those batches' records to search."""

    def __init__(self, buffer_of: Callable):
        # per batch its entries (an entry is None once filed), or its ChangeBatch, unread
        self.batches: list = []
        self.searched: set[str] = set()  # ids of topics whose changes a search took
        self._buffer_of = buffer_of     # file number -> the bytes its batches were read from
        # the pending batches' records, one after another: what a search scans (in
        # a controller's log, heartbeats lie between them: 33 -> 20 MiB, 6.6 -> 3.7 ms)
        self._text = bytearray()
        self._starts: list[int] = []    # per batch, where its records start in _text
        self._changes = 0               # changes added (an entry read already: one, a run too)
        self._scanned = 0               # bytes searched since the last take_all

    def add(self, file_no: int, start: int, end: int, entries: list) -> None:
        """Keep the change entries of the batch at ``[start, end)`` of file ``file_no``."""
        # a topic searched before may be named again: searched again, it takes what is left
        self.searched.clear()
        self._starts.append(len(self._text))
        self._text += self._buffer_of(file_no)[start + HEADER_SIZE:end]
        self.batches.append(entries)
        self._changes += len(entries)

    def take_all(self) -> list[list]:
        """Every batch's entries not yet taken, in log order; none are left."""
        batches = self.batches
        self.batches = []
        self._text, self._starts = bytearray(), []
        self.searched.clear()
        self._changes = self._scanned = 0
        return [b.entries() if type(b) is ChangeBatch else b for b in batches]

    def take_topic(self, raw: bytes) -> list:
        """The entries not yet taken that name the topic whose raw id is
        ``raw``, in log order; they are taken."""
        text, starts = self._text, self._starts
        self._scanned += len(text)
        hits = set()
        p = text.find(raw)
        while p >= 0:
            hits.add(bisect_right(starts, p) - 1)   # a match across two batches finds no entry
            p = text.find(raw, p + 1)
        taken = []
        batches = self.batches
        for n in sorted(hits):
            entries = batches[n]
            if type(entries) is ChangeBatch:   # read now
                entries = batches[n] = entries.entries()
            for j, entry in enumerate(entries):
                if entry is not None and entry[RAW_TOPIC_ID] == raw:
                    taken.append(entry)
                    entries[j] = None
        return taken

    def count(self) -> int:
        """How many changes are pending."""
        return sum(len(b) if type(b) is ChangeBatch else
                   sum(deferred.count(e) for e in b if e is not None)
                   for b in self.batches)

    def effects(self, record_of: Callable) -> ChangeEffects | None:
        """What the pending changes do, in log order (:mod:`.change_effects`):
        a batch left unread by one match, the entries of one read already
        decoded one by one (``record_of(ref)``: the store's); None if there
        are too many of those, or one does not decode."""
        found, decoded = [], 0
        reduced = ChangeEffects()
        for b in self.batches:
            if type(b) is ChangeBatch:
                effects = b.effects()
                if effects is None:
                    return None
                found += effects
                if len(found) >= EFFECTS_AT_ONCE:
                    reduced.add(found)
                    found = []
                continue
            for entry in b:
                if entry is None:
                    continue
                for one in deferred.records(entry):
                    ref, pid, raw = one[REF], one[PARTITION_ID], one[RAW_TOPIC_ID]
                    decoded += 1
                    if decoded > MAX_DECODED_EFFECTS:
                        return None
                    d = record_of(ref).peek()
                    effect = None if d is None else of_fields(pid, raw, d)
                    if effect is None:
                        return None
                    found.append(effect)
        reduced.add(found)
        return reduced

    def over_budget(self) -> bool:
        """Whether searches have cost enough that filing the rest is cheaper."""
        return self._scanned > SEARCH_BYTES_PER_CHANGE * self._changes
