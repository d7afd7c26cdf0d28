"""The TopicRuns one reader has learned, and a topic found by them.

A snapshot's topics are mostly alike: a TopicRecord and its partitions,
framed the same way topic after topic. Once :data:`TOPIC_RUN_AFTER` topics
of one shape were read record by record, a
:class:`~.partition_runs.TopicRun` of that shape (its pattern matches a
TopicRecord and its partitions whole; the record versions it reads are
:mod:`.partition_runs`' ``VERSIONS``) is kept here by its key
(:func:`.partition_runs.key`: where the name's length byte is, the name's
length, a byte after it), and :class:`~.reading.FastReading` asks these
TopicRuns first at each record of a data batch, and of each small batch of
a log. Reading the bytes stays with :mod:`.partition_runs`; this module
keeps what was learned and finds the TopicRun for a position.
"""

from __future__ import annotations

from ..kraft.primitives import URLSAFE, b2a_base64
from . import deferred
from .partition_runs import OFFSET_DELTAS, TIMESTAMP_DELTAS, PartitionRun, topic_run_after
from .partition_runs import key as topic_key

# topics of one shape read record by record before its TopicRun is made: a
# shape few topics have costs no compile (-34% reader instructions on the
# bench's mixed snapshot at 100,000 partitions, the same time at 1 M)
TOPIC_RUN_AFTER = 16


class LearnedTopicRuns:
    """One reader's TopicRuns. The reader's hot loop reads ``by_key``,
    ``name_at_by_width`` and ``name_ats`` itself (they are plain values, read
    once per batch); ``name_ats`` is a new tuple when :meth:`learn` adds a
    place, so it is read again after a TopicRecord was read."""

    def __init__(self):
        self.shapes: dict = {}          # TopicRuns by their shape (.partition_runs)
        self.by_key: dict = {}          # TopicRuns by partition_runs.key: the last of each
        self.seen: dict = {}            # partition_runs.key -> topics read record by record
        self.name_ats: tuple = ()       # partition_runs.key's name_at of TopicRuns (a few)
        self.name_at_by_width = [0, 0]  # the last one matched, per record length width (1, 2+)

    def learn(self, buf, at: int, vstart: int, end: int, run: PartitionRun) -> None:
        """After the TopicRecord at ``at`` (its value at ``vstart``) and its
        partitions of shape ``run``: the next topics alike are looked for by
        their TopicRun's key. The TopicRun is made (a compile, ~0.15 ms)
        once :data:`TOPIC_RUN_AFTER` topics like it were read record by
        record, so that a shape few topics have costs no compile (a snapshot
        of mixed topics has hundreds of shapes)."""
        k = topic_key(buf, at, vstart - at + 3, end)
        tr = self.by_key.get(k)
        if tr is None or tr.run is not run:
            seen = self.seen[k] = self.seen.get(k, 0) + 1
            if seen < TOPIC_RUN_AFTER:
                return
            tr = self.by_key[k] = topic_run_after(self.shapes, buf, at, vstart, run)
        self.name_at_by_width[buf[at] >> 7] = tr.name_at
        if tr.name_at not in self.name_ats:
            self.name_ats = (tr.name_at, *self.name_ats[:5])

    def run_at(self, buf, pos: int, end: int, tried: int) -> tuple:
        """``(TopicRun, match)`` at ``pos`` for a TopicRecord whose name's
        length is at another of the places seen than ``tried`` (the one the
        reader tried first), or ``(None, None)``; the place found is tried
        first from now on for records whose length is as wide."""
        for name_at in self.name_ats:
            if name_at == tried or pos + name_at >= end or buf[pos + name_at - 2] != 2:   # apiKey
                continue
            tr = self.by_key.get(topic_key(buf, pos, name_at, end))
            m = None if tr is None else tr.pattern.match(buf, pos, end)
            if m is not None:
                self.name_at_by_width[buf[pos] >> 7] = name_at
                return tr, m
        return None, None

    def batch_entry(self, buf, p: int, end: int, count: int, base: int, ts: int, refs: int):
        """The records section ``buf[p:end]`` of a batch of ``count`` records
        as one ``TOPIC_WITH_RUN`` entry, if one of these TopicRuns matches it
        whole (a TopicRecord v0 and its partitions), as the reader's
        ``records`` would read it; else None. ``base``, ``ts``: the batch's
        base offset and timestamp; ``refs``: a ref less its position in ``buf``."""
        name_at = self.name_at_by_width[buf[p] >> 7]
        if not name_at or p + name_at >= end:
            return None
        nb = buf[p + name_at]
        if p + name_at + nb + 18 >= end:
            return None
        tr = self.by_key.get(name_at << 16 | nb << 8 | buf[p + name_at + nb + 18])
        m = None if tr is None else tr.pattern.match(buf, p, end)
        if m is None or m.end() != end:
            return None
        run, start, n = tr.run, p + tr.size, count - 1
        if start + n * run.size != end:
            return None
        tsd, od, name, raw = m.groups()
        try:
            name = str(name, "utf-8")
        except UnicodeDecodeError:
            return None
        return deferred.topic_with_run(
            refs + p, name, raw, base + OFFSET_DELTAS[od], ts + TIMESTAMP_DELTAS[tsd],
            b2a_base64(raw, newline=False)[:22].translate(URLSAFE).decode(),
            refs + start, run, (run.pid_structs.get(n) or run.pid_unpacker(n))(buf, start))

