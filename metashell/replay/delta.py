"""One record's effect on the image, chosen by its type (Kafka's
``MetadataDelta.replay``).

:class:`Delta` holds the image being built and the load's
:class:`~.problems.Tally` (what was applied, skipped and why). :meth:`Delta.replay` looks the record's name up in
:data:`RULES`, the ``REPLAY`` tables of the modules of
:mod:`metashell.replay.entities` (one module per entity: brokers and
controllers, topics and partitions, configs, quotas, ACLs, SCRAM,
delegation tokens, features, producer ids, the quorum), and calls the
function found there with the delta and the record. A rule that cannot
apply a record raises :class:`ApplyError`: the record is reported as a
:class:`Problem` with its offset and skipped; the rest still loads.

``on_change`` (None unless set) is called as ``on_change(key, rec)`` with the
entity key (as in ``Image.history``; ``("partition", topic id, partition id)``
for partition records) of each record applied here, for ``watch`` in live
mode. Deferred records (the fast path of a file load) do not call it: a live
session reads fetched batches without deferral.
"""

from __future__ import annotations

from ..fast.door import Filer
from ..kraft.records import UNDECODABLE, Record
from .entities import (acls, brokers, configs, features, producer_ids, quotas, scram, tokens,
                       topics)
from .problems import ApplyError, Tally

#: record name -> ``replay(delta, rec)`` of the entity module that owns it
RULES = {**brokers.REPLAY, **topics.REPLAY, **configs.REPLAY, **quotas.REPLAY, **acls.REPLAY,
         **scram.REPLAY, **tokens.REPLAY, **features.REPLAY, **producer_ids.REPLAY}
# records whose replay creates, changes or removes topics or partitions: a log's
# pending changes (fast/pending.py) are filed before any of them
PARTITION_RECORDS = frozenset(("TopicRecord", "PartitionRecord", "PartitionChangeRecord",
                               "RemoveTopicRecord", "ClearElrRecord"))


class Delta:
    """The image being built and what each record does to it."""

    def __init__(self, image, tally: Tally, topic_source=None, filer: "Filer | None" = None,
                 partition_key=topics.decoded_key):
        self.image = image
        self.tally = tally
        self.on_change = tally.on_change   # see the module docstring
        self.in_snapshot = False   # applying a snapshot (a broker's registration time is unknown)
        # what a new topic asks about its partitions (replay/folding.py's PartitionFolder), and the
        # log's partition changes not yet filed (fast/change_filing.py): None where
        # only records are replayed (a snapshot's kept runs)
        self.topic_source = topic_source
        self.filer = filer
        # a partition record's (topic id, partition id), None if undecodable: the
        # engine gives the fast path's, which reads a lazy record's from its bytes
        self.partition_key = partition_key

    def replay(self, rec: Record, settle: bool = True) -> None:
        """Apply one decoded (or lazily decoded) metadata record; ``settle``:
        file the pending partition changes first if it concerns topics."""
        name = rec.name
        if settle and name in PARTITION_RECORDS and self.filer.changes.batches:
            self.filer.settle()
        rule = RULES.get(name)
        tally = self.tally
        if rule is None:
            tally.problem(rec.offset, f"no replay rule for {rec.name}")
            return
        try:
            rule(self, rec)
        except ApplyError as e:
            tally.problem(rec.offset, f"{rec.name}: {e}")
            return
        if rec.kind == UNDECODABLE:   # a lazy body turned out bad
            tally.problem(rec.offset, f"undecodable {rec.name} v{rec.version}: {rec.error}")
            return
        tally.applied += 1
        by_type = tally.by_type
        by_type[name] = by_type.get(name, 0) + 1

    def history(self, key: tuple, rec) -> None:
        """Add a record (or a deferred ref) to the history of entity ``key``."""
        history = self.image.history
        recs = history.get(key)
        if recs is None:
            history[key] = [rec]
        else:
            history_add(history, key, recs, rec)
        if self.on_change is not None:
            self.on_change(key, rec)

    def touch(self, entity, key: tuple, rec: Record) -> None:
        """An entity changed by ``rec`` in place: its provenance and history."""
        entity.change = (rec.offset, rec.timestamp)
        self.history(key, rec)


def history_add(history: dict, key: tuple, recs, rec) -> None:
    """Add a record to an entity's history ``recs``: a list, or the bare ref
    of the TopicRecord that created a topic on the fast path (no list per
    topic until it changes)."""
    if type(recs) is list:
        recs.append(rec)
    else:
        history[key] = [recs, rec]
