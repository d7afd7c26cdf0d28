"""Batches of partition changes, checked in one match and read when needed.

A controller's log is mostly PartitionChangeRecords (ISR shrinks and
expands, leader moves), a few to a few hundred per batch. The engine keeps
such batches unfiled until something needs them (fast/pending.py), so
the reader need not read their records either: it only has to know that a
batch holds nothing else. A :class:`ChangeShapes` learns the framing of
the change records the per-record path defers (the record's length, the
widths of its timestamp and offset deltas, its value's length and frame
header) and the layout of their tagged fields (which fields, their sizes);
once it knows a few, one regular expression, an alternation of
them repeated as many times as the batch declares records, checks that
its records section is that many such records end to end. The
reader then hands the engine the batch as a :class:`ChangeBatch`, whose
entries (what the per-record path would have made of it) are read when the
changes are filed, and whose effects on the partitions' counts one more
match reads for ``summary`` (:data:`.partition_change.EFFECT`). A batch with any
other record, or any record framed otherwise, is read record by record as
before, and teaches its shapes.
"""

from __future__ import annotations

import re
from typing import Callable

from ..kraft.batch import HEADER_SIZE
from ..kraft.records import DECODE_ERRORS
from .deferred import partition
from .partition_change import EFFECT, PARTITION_KEY, agrees, skeleton
from .partition_change import VERSIONS as CHANGE_VERSIONS
from .partition_runs import framing_widths, varint_pattern

# a batch is left unread only when EFFECT (partition_change) reads each of its records
VERSIONS = CHANGE_VERSIONS

MAX_SHAPES = 64   # alternatives are tried in turn: a few dozen shapes cover a controller's changes
MAX_COMPILED = 256   # batch patterns compiled per reader, one per record count, before one pattern
                     # of any count and a second pass counting them serve the rest
# batches of a count checked that way before it has its own pattern (a compile costs
# what the second pass does on about 50 batches)
SEEN_BEFORE_COMPILED = 32


class ChangeShapes:
    """The shapes of the change records one reader has deferred, and the
    patterns that check a batch is made of them."""

    def __init__(self):
        self.keys: set = set()
        self._alternatives: list[bytes] = []
        self._exact: dict = {}           # record count -> a batch of them (a fullmatch)
        self._compiled = 0               # patterns compiled for counts, at most MAX_COMPILED
        self._seen: dict = {}            # record count -> batches of it checked
        self._any = self._count = None   # any count (fullmatch, findall): counts without their own
        self._one = None                 # the alternation of the shapes, as a pattern's source
        # record length -> where its partitionId and topicId lie from its start, for the
        # lengths of the shapes learned (None: two shapes of that length put them apart)
        self.ids_at: dict = {}

    def learn(self, buf, at: int, vstart: int, rend: int, decoder: Callable) -> None:
        """Learn the shape of the change record at ``buf[at:rend]`` (value at
        ``vstart``), which the per-record path deferred: a null key, no
        headers, a frame header of one byte each. Its tagged fields are
        pinned too (:func:`.partition_change.skeleton`), and the shape is
        learned only if :data:`.partition_change.EFFECT` reads the record as
        ``decoder`` (its plain decoder) does: a batch of learned shapes is
        then read right by ``EFFECT`` as well (``summary``)."""
        if len(self.keys) >= MAX_SHAPES:
            return
        if self._alternatives and self._whole()(buf, at, rend):   # one of them
            return
        vend = rend - 1                                               # headers: 1 byte
        tags = skeleton(buf, vstart + 23, vend)
        key = (rend - at, vstart - at, bytes(buf[vstart:vstart + 3]), tags)
        if key in self.keys:
            return
        self.keys.add(key)                                            # learned, or found wanting
        if tags is None or not self._readable(buf, at, vstart, rend, decoder):
            return
        lb, tw, ow = framing_widths(buf, at)                          # length, deltas
        self._alternatives.append(
            re.escape(bytes(buf[at:at + lb])) + rb"."                 # length, any attributes
            + varint_pattern(tw) + varint_pattern(ow) + rb"\x01"     # deltas, null key
            + re.escape(bytes(buf[at + lb + 2 + tw + ow:vstart + 3]))  # value length, frame header
            + rb".{20}" + tags + rb"\x00")                            # the ids, tagged fields; no headers
        ids = vstart + 3 - at   # every varint of a shape has its width: the ids lie here
        self.ids_at[rend - at] = ids if self.ids_at.get(rend - at, ids) == ids else None
        self._exact.clear()
        self._one = self._any = self._count = None

    @staticmethod
    def _readable(buf, at: int, vstart: int, rend: int, decoder: Callable) -> bool:
        """Whether ``EFFECT`` reads the record at ``buf[at:rend]`` as its plain decoder does."""
        m = EFFECT.fullmatch(buf, at, rend)
        if m is None:
            return False
        vlen = rend - 1 - vstart
        try:
            d, p = decoder(buf[vstart:vstart + vlen], 3, vlen)
        except DECODE_ERRORS:
            return False
        return p == vlen and agrees(m.groups(b""), d)

    def match(self, buf, start: int, end: int, count: int) -> bool:
        """Whether ``buf[start:end]`` is ``count`` change records of the
        shapes learned, and nothing else."""
        exact = self._exact.get(count)
        if exact is not None:
            return exact(buf, start, end) is not None
        if not self._alternatives or count < 1:
            return False
        seen = self._seen[count] = self._seen.get(count, 0) + 1
        # a batch of one change at once: a controller writes most changes so, and its
        # pattern is no longer than the one of any count (two compiles fewer)
        if (count == 1 or seen >= SEEN_BEFORE_COMPILED) and self._compiled < MAX_COMPILED:
            one = self._alternation()
            # exactly ``count`` of them end to end, in one match (-20% reader time on
            # the log dir's segment); a compile each (~0.2 ms for a few shapes, 2 ms
            # for 64), for counts that come again and again
            self._compiled += 1
            exact = self._exact[count] = re.compile(one + b"{%d}" % count, re.DOTALL).fullmatch
            return exact(buf, start, end) is not None
        # any count, then a second pass counts them
        return self._whole()(buf, start, end) is not None and len(self._each()(buf, start, end)) == count

    def single(self) -> "Callable | None":
        """fullmatch of a batch of one change record of the shapes learned,
        once :meth:`match` has compiled it (a run of small batches calls it
        straight: :mod:`.batch_runs`)."""
        return self._exact.get(1)

    def _whole(self) -> Callable:
        """fullmatch: records of the shapes learned end to end, any number."""
        if self._any is None:
            self._any = re.compile(self._alternation() + b"+", re.DOTALL).fullmatch
        return self._any

    def _each(self) -> Callable:
        """findall: b"" per record of the shapes learned."""
        if self._count is None:
            self._count = re.compile(b"()" + self._alternation(), re.DOTALL).findall
        return self._count

    def _alternation(self) -> bytes:
        """The source of a pattern matching one record of a shape learned."""
        if self._one is None:
            self._one = b"(?:" + b"|".join(self._alternatives) + b")"
        return self._one


class ChangeBatch:
    """The records of a batch of partition changes, checked but not read:
    :meth:`entries` reads them (``read(header, ref base)``, the reader's),
    :meth:`effects` what they do (``buf``: the bytes they are in)."""

    __slots__ = ("header", "ref_base", "read", "buf")

    spans_batches = False   # one batch, to the replay's batch loader
    changes_only = True     # of partition changes only: a log's are kept pending

    def __init__(self, header, ref_base: int, read: Callable, buf):
        self.header, self.ref_base, self.read, self.buf = header, ref_base, read, buf

    def __len__(self) -> int:
        return self.header.count

    def entries(self) -> list:
        """The deferred change entries (``deferred.PARTITION``), as the per-record path makes them, found by :data:`EFFECT`
        (it reads each record of a batch of learned shapes exactly): one C
        step per record and one unpack of its ids, -60% of the per-record
        path's time (a first look in the bench's log dir: 8.4 -> 6.9 ms)."""
        h = self.header
        start = h.position + HEADER_SIZE
        buf, base = self.buf, self.ref_base - start
        found = [partition(base + m.start(), 5, *PARTITION_KEY(buf, m.start(1)))
                 for m in EFFECT.finditer(buf, start, h.end)]
        return found if len(found) == h.count else self.read(h, self.ref_base)   # changed: as read

    def effects(self) -> "list | None":
        """Each record's effect (:data:`.partition_change.EFFECT`), in one call; None
        if the bytes are no longer as they were read."""
        h = self.header
        found = EFFECT.findall(self.buf, h.position + HEADER_SIZE, h.end)
        return found if len(found) == h.count else None
